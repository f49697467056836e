from ragpulse.app.cli import main

raise SystemExit(main())

from ragpulse.collector.cli import main

raise SystemExit(main())

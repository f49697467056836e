from ragpulse.mixin.rules import main

raise SystemExit(main())

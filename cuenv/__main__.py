from cuenv.cli import main

raise SystemExit(main())

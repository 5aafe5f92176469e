from replicate.cli.main import main

raise SystemExit(main())

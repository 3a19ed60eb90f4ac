from townbot.cli import main

raise SystemExit(main())

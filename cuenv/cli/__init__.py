"""The command line (cuenv.cli.main). ``entry`` is the console script and ``python -m cuenv``:
`cuenv --version` answers before the parser and all it imports are loaded (issue 18: start-up
within 3x of `python -c pass`)."""


def entry() -> None:
    import sys

    if sys.argv[1:] == ["--version"]:
        from cuenv import __version__

        try:
            sys.stdout.write(f"cuenv {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `cuenv --version | head -c0`: the reader left, no traceback
            import os

            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return
    try:
        from cuenv.cli.main import entry as run
    except KeyboardInterrupt:  # Ctrl-C while still starting up: no traceback; 130, never death by SIGINT
        import os

        os._exit(130)  # not SystemExit: see cuenv.cli.main.entry
    run()

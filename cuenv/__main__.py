try:
    from cuenv.cli import entry
except KeyboardInterrupt:  # Ctrl-C while still starting up: no traceback; 130, never death by SIGINT
    import os

    os._exit(130)  # not SystemExit: see cuenv.cli.main.entry

entry()

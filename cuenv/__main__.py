try:
    from cuenv.cli import entry
except KeyboardInterrupt:  # Ctrl-C while still starting up: no traceback either
    raise SystemExit(130) from None

entry()

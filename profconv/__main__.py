import sys

try:
    from profconv.cli import main
except KeyboardInterrupt:  # Ctrl-C before the CLI is even loaded: quiet, like any other interrupt
    sys.exit(130)

main()

"""``python -m ocsched``: the same as the ``ocsched`` command."""

from ocsched.cli import main

if __name__ == "__main__":
    main()

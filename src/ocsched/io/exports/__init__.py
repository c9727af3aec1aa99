"""Schedules out: the files simulators, controllers and viewers read (one module per format)."""

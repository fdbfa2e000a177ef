"""The debugger's screens: browse (the default), editor, run, diff, promote, help, dialogs."""

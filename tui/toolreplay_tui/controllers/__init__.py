"""The debugger's controllers: each owns one part of the session's state and the
actions that change it (patches, editing outputs, large values, runs and forks,
new-call answers, promote, loading the trace). The app composes them and hands
each message and action to the one that owns it; they reach the app only
through `toolreplay_tui.controllers.host.Host`."""

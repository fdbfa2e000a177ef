"""The debugger's pure logic: view models, the run-protocol client, the working folder.

Nothing here imports Textual: every module is tested on its own, and the screens
and widgets only render what these modules compute.
"""

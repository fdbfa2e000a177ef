"""The bundled incident: a refund the model approved above the manual-review limit.

`app.py` is the application, `record.py` records `refund.trp`; see README.md.
"""

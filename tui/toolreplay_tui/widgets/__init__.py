"""The debugger's widgets: line-API lists that render only the rows on screen."""

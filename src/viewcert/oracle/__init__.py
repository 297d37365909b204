"""See the package docstring of viewcert for the map."""

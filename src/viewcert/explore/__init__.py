"""The explorer: a static site of a certificate's items, views, phantoms and labels (``viewcert explore``).

- ``source``    what is read from a certify output or an export folder (the one certificate adapter)
- ``kinds``     what the explorer shows of each certificate kind (columns, filters, map axes, record, overlays),
                picked by the certificate itself
- ``outcomes``  the index's filters and the losses of an interaction item
- ``overlays``  where the certificate's points fall in each view (viewcert's cameras)
- ``rendered``  a certify output's views drawn by viewcert's renderer at the certificate's settings
- ``wording``   the certificate's fields in words, with units and stated precision
- ``answers``   model answers from a ladder output (``--ladder``)
- ``chart``     the map of the benchmark (an SVG frame, one point per item drawn on a canvas by the page)
- ``site``      the HTML pages, thumbnails and shipped assets
"""

from viewcert.explore.site import write_site

__all__ = ["write_site"]

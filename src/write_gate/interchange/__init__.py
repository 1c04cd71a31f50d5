"""Files in and out: the official memory server's files, export formats, import and export."""

"""The `casslab` command: parses, calls the library, prints."""

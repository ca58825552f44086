"""The factors of a campaign: the registry (every kind of factor, declared once), the
level parsers it uses, and the typed `Cell` the registry reads a cell's levels into.

`registry` is the one place a factor's name is read; `cell` builds a `Cell` from a
cell's levels; `network` turns the network levels of a cell into a NetSpec mapping;
`parsers` check single levels. Outside this package, code asks the registry (kind,
change, level parser, flags) or reads a `Cell`.
"""

"""Data in: named and user data sets (:mod:`.datasets`), file readers with one-line errors
(:mod:`.readers`) and the strict YAML loader specs use (:mod:`.strict_yaml`)."""

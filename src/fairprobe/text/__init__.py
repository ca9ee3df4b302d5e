"""Text utilities: mutation (:mod:`.mutate`), sentence splitting (:mod:`.sentences`), spaCy parser
loading (:mod:`.parser`) and HInter's dependency invariant (:mod:`.invariant`)."""

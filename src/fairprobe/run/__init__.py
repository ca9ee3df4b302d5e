"""The run engine: one block into one run folder, resumably (:mod:`.runner`), the folder's rules and
manifest (:mod:`.folder`), the SQLite store and response cache (:mod:`.store`, :mod:`.caching`),
findings on disk (:mod:`.shards`, :mod:`.findings`), progress lines (:mod:`.progress`), streamed
execution (:mod:`.streaming`) and the CPU thread limit (:mod:`.threads`)."""

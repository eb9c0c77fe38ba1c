"""The reads the web layers publish: every page, poll, stream and export of the API and the dashboard reads
through these modules, named by what they read. Each calls the store's query (its SQL stays there) and
hands back read models, frozen copies of the columns its callers use, so that no live ORM object is kept
in a cache, passed between requests or held past its session."""

"""Files: reading crawl output (JSON Lines, gzip, encodings, markup) into records and dead letters, and writing
outputs that cannot hurt the inputs or each other."""

-- An index on a table the next file creates: filename order runs this first.

CREATE INDEX items_by_title ON items (title);

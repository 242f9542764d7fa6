ALTER TABLE frames ADD COLUMN g AS (name || file) VIRTUAL;

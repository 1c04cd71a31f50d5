CREATE INDEX ON :`Person`(`name`)

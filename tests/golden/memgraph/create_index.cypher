CREATE INDEX ON :`Person`(`_key`)

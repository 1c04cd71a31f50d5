CALL db.idx.fulltext.createNodeIndex('Person', {field: '_grams', nostem: true})

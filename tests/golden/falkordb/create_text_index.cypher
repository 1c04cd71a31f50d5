CALL db.idx.fulltext.createNodeIndex({label: 'Person', stopwords: []}, '_search')

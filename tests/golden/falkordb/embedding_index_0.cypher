CREATE VECTOR INDEX FOR (v:_Embedding) ON (v.vector) OPTIONS {dimension: 256, similarityFunction: 'cosine'}

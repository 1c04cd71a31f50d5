CREATE VECTOR INDEX write_gate_embeddings ON :_Embedding(vector) WITH CONFIG {"dimension": 256, "capacity": 100000, "metric": "cos"}

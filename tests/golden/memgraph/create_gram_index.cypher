CREATE TEXT INDEX `write_gate_grams_Person` ON :`Person`(_grams)

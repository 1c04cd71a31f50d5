CREATE TEXT INDEX `write_gate_text_Person` ON :`Person`(_search)

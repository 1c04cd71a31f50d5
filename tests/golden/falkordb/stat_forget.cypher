MATCH (s:`_StatCount`) DELETE s

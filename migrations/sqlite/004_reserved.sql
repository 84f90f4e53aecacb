-- extscope collector schema, version 4: no change to the schema.
SELECT 1;

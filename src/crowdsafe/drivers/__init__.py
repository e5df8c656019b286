"""The drivers: one per family of runs (publish, query, perturb, attack). A driver owns the order
every run keeps, whatever the engine: plan (fixed before the data is read) → ledger charge →
run (the engine's per-row stages) → certificate → write. The engine
(:class:`~crowdsafe.engines.protocol.Engine`) supplies only the table operations, so the
privacy boundary is drawn once, here."""

"""The lint rules: every rule is data plus one small function.

- `registry`: the rule table, `Rule`, `Context` and the `rule` decorator that registers one;
- `engine`: the whole table (it imports every rules module, which registers its rules) and
  the two ways to run it, `lint_findings` (validate's rules) and `selected_rules` (lint's);
- `common`, `governance`, `permissions`, `subjects`, `targets`: the rules, by what they read.
- `ros`: the rules for an sros2 policy and its protection sidecar;

May import: govkit.common, govkit.catalog, govkit.documents.
"""

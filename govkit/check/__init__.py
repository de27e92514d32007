"""Judge a document: the XSD, validation, the lint rules and their engine, the lint command,
and the analysis commands over what `loaded` reads.

- `vocabulary`: the values the command line shows: severities, output formats, bounds
  (light: the CLI reads it at start-up);
- `xsd`: govkit's own DDS Security 1.1 schemas (`schemas/`), and their findings;
- `validate`: validation's entry points: safe parsing, the XSD, the target's rules;
- `construct`: validation by construction: a permissions shape proven valid once;
- `rules/`: the lint rules, their registry and their engine;
- `lint`: the `lint` command's engine: what the XSD cannot say;
- `config`: lint's defaults from pyproject.toml or govkit.toml;
- `suppress`: inline suppressions: `<!-- govkit: ignore RULE -->`;
- `output_formats`: lint's reports written as text, JSON, GitHub annotations, SARIF, JUnit;
- `loaded`: reading one document for identify, explain and diff;
- `identify`: which catalog profile a governance document implements;
- `explain`: what a document protects and what it does not, in plain English;
- `diff`: the semantic difference of two documents of one kind.
- `ros_policy`, `ros_lint`, `ros_explain`: an sros2 policy and its protection sidecar read
  or refused, linted, and explained per ROS name;

May import: govkit.common, govkit.catalog, govkit.pki, govkit.documents.
"""

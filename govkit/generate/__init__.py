"""Make the files: many documents in one pass, signed or not, one profile's bundle kept
current for a runner, a ROS 2 keystore to deploy.

- `fleet`: one pass over many documents: render (or read), validate, sign and write each;
- `bundle`: the signed bundle a runner needs for one profile, made current on demand;
- `sros2`: `govkit export sros2`: a ROS 2 keystore from the PKI and the signed documents;
- `validity`: a permissions validity the user chooses, and re-signing with a new one.
- `policy`: `generate --policy`: an sros2 policy's documents and its test PKI;
- `grants`: which mode wrote each permissions file, so that neither overwrites the other's;

May import: every stage up to govkit.runners.
"""

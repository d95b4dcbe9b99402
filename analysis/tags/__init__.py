"""Topic tagging: a taxonomy as data, a trained multi-label classifier, evaluation, corrections.

taxonomy.py  tags, groups, descriptions, seed keywords (taxonomy.toml is the default)
keywords.py  seed-keyword matching (weak labels, a feature, the keyword baseline)
training.py  label files and the shipped dev + dev2 + dev3 labels
features.py  embedding + TF-IDF + keyword + boundary features
boundaries.py sentence-level features for the boundaries the taxonomy states (an LM is trained, ...)
model.py     two logistic regressions per tag, thresholds by cross-validation
persist.py   the trained model saved as numpy arrays + JSON (no pickle: loading it runs no code)
tagger.py    train, tag documents, record corrections
review.py    the review queue: papers the model is least sure about, for corrections
evaluate.py  `radar tag eval` and cross-validation

Import what you need from its module; this package imports nothing heavy (scikit-learn loads only
when a model is trained or used).
"""

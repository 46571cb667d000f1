"""Caption metrics of the COCO caption toolkit (pycocoevalcap), reproduced: tokenization, BLEU,
METEOR (Java), ROUGE-L, CIDEr-D and SPICE (optional Java backend)."""

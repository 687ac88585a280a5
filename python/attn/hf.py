"""attn as an attention implementation of Hugging Face transformers.

    import attn
    attn.hf.register()                                 # name "attn"
    model = AutoModelForCausalLM.from_pretrained(
        name, attn_implementation="attn", torch_dtype=torch.bfloat16)

attention_forward has the signature transformers gives attention functions
and the semantics of its sdpa_attention_forward (integrations/
sdpa_attention.py), with attn.scaled_dot_product_attention in place of
torch's. transformers is imported by register() only.
"""

from .functional import scaled_dot_product_attention

__all__ = ["attention_forward", "register"]


def attention_forward(module, query, key, value, attention_mask, dropout=0.0,
                      scaling=None, is_causal=None, **kwargs):
    """query [B, Hq, S, D], key and value [B, Hkv, Sk, D], attention_mask
    None or 4-D (bool, or floating of the activations' dtype); returns
    (attn_output [B, S, Hq, D], None): attn computes no attention weights.
    Causal as sdpa decides it: is_causal (else module.is_causal, else True)
    for more than one query and no mask. GQA runs natively (no repeat_kv)."""
    if dropout:
        raise ValueError("attn has no attention dropout (dropout=%s): set "
                         "the model's attention_dropout to 0, or call "
                         "model.eval()" % dropout)
    if kwargs.get("output_attentions") or kwargs.get("head_mask") is not None:
        raise ValueError("attn computes no attention weights and takes no "
                         "head_mask: use attn_implementation='eager' for "
                         "output_attentions or head_mask")
    if attention_mask is not None and attention_mask.dim() == 4:
        attention_mask = attention_mask[:, :, :, :key.shape[-2]]
    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    # bool(): under torch.compile the shape test is a SymBool, which SDPA's
    # is_causal does not take.
    is_causal = bool(query.shape[2] > 1 and attention_mask is None
                     and is_causal)
    out = scaled_dot_product_attention(
        query, key, value, attention_mask, is_causal=is_causal,
        scale=scaling, enable_gqa=query.shape[1] != key.shape[1])
    return out.transpose(1, 2).contiguous(), None


def register(name="attn"):
    """Registers attention_forward as transformers attention `name`
    (AttentionInterface), with sdpa's mask function where transformers has
    an AttentionMaskInterface (4.53 and later: without one registered, it
    would build no mask for the name, and padding would go unmasked).
    Returns the name, for attn_implementation=."""
    try:
        import transformers
    except ImportError as e:
        raise ImportError("attn.hf.register needs transformers (4.48 or "
                          "later: AttentionInterface)") from e
    transformers.AttentionInterface.register(name, attention_forward)
    try:
        from transformers.masking_utils import (AttentionMaskInterface,
                                                sdpa_mask)
    except ImportError:  # before 4.53 models build 4-D masks themselves
        return name
    AttentionMaskInterface.register(name, sdpa_mask)
    return name

import torch
import attn_runtime as ar
lib = ar.load('.carry/bundles/det')
for shape in ((4, 1, 1, 300), (1, 8, 100, 300), (4, 8, 1, 300)):
    q = torch.randn(4, 8, 100, 64, device='cuda', dtype=torch.bfloat16)
    k, v = (torch.randn(4, 8, 300, 64, device='cuda', dtype=torch.bfloat16) for _ in range(2))
    bias = torch.randn(*shape, device='cuda', dtype=torch.bfloat16, requires_grad=True).expand(4, 8, 100, 300)
    out, lse = lib.attention(q, k, v, causal=True, bias=bias, return_lse=True)
    grads = lib.attention_backward(torch.ones_like(out), q, k, v, out, lse, causal=True, bias=bias, deterministic=True)
torch.cuda.synchronize()
print('ok', len(grads))

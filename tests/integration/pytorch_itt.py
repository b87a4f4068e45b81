# pytorch_itt.py: a small deterministic model (three Linear layers, ReLU
# and Tanh between them, MSELoss, SGD with momentum) trained for 6 steps on
# fixed data; step 4 runs under the program's own torch.profiler.profile().
# Prints one JSON line: the losses (hex floats, bit for bit), the profiled
# step's op names as key_averages() lists them and its CPU events as the
# profiler recorded them (RecordFunction's: name: count). key_averages'
# counts are left out: it merges an op with an only child of its name when
# their microsecond times nest, which varies from run to run with or
# without gtrace (aten::div_ counted once or twice, 1.13).
import json

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.Tanh(),
                            torch.nn.Linear(16, 4))
loss_fn = torch.nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(32, 8)
y = torch.randn(32, 4)


def step():
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


losses, ops, events = [], {}, {}
for i in range(6):
    if i == 4:
        with torch.profiler.profile() as prof:
            losses.append(step())
        ops = sorted({e.key for e in prof.key_averages()})
        for e in prof.profiler.kineto_results.events():
            if e.device_type() == torch.autograd.DeviceType.CPU:
                events[e.name()] = events.get(e.name(), 0) + 1
    else:
        losses.append(step())
print(json.dumps({"losses": [float(v).hex() for v in losses], "ops": ops, "events": events}, sort_keys=True))

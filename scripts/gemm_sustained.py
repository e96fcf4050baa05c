#!/usr/bin/env python3
# gemm_sustained.py OUT.csv - the rate of transformer-shaped bf16 and fp8
# GEMMs on one GPU in a 10-product burst and after 12 s of back-to-back
# products (the power cap lowers the clock), with the SM clock and power
# that nvidia-smi reads meanwhile (tests/data/h100-gpt/gemm_sustained.csv).
import torch,time,subprocess,sys
o=open(sys.argv[1],'w');o.write('dtype,m,n,k,burst_tflops,sustained_tflops,seconds,sm_mhz,power_w\n')
def smi():
    r=subprocess.run(['nvidia-smi','--query-gpu=clocks.sm,power.draw','--format=csv,noheader,nounits'],capture_output=True,text=True).stdout.split(',')
    return float(r[0]),float(r[1])
s1=torch.tensor(1.0,device='cuda')
def mk(d,m,n,k):
    a=torch.randn(m,k,device='cuda',dtype=torch.bfloat16);b=torch.randn(n,k,device='cuda',dtype=torch.bfloat16)
    if d=='fp8':
        a=a.to(torch.float8_e4m3fn);b=b.to(torch.float8_e4m3fn).t()
        return lambda:torch._scaled_mm(a,b,scale_a=s1,scale_b=s1,out_dtype=torch.bfloat16)
    b=b.t();return lambda:a@b
for d,m,n,k in [('bf16',8192,8192,8192),('bf16',4096,8192,2048),('bf16',4096,2048,8192),('bf16',8192,3072,4096),('bf16',8192,12288,4096),('fp8',8192,8192,8192),('fp8',8192,28672,4096),('fp8',8192,4096,14336),('fp8',8192,6144,4096)]:
    f=mk(d,m,n,k);fl=2*m*n*k
    time.sleep(3)
    for _ in range(3):f()
    torch.cuda.synchronize();t=time.perf_counter()
    for _ in range(10):f()
    torch.cuda.synchronize();burst=fl*10/(time.perf_counter()-t)/1e12
    t0=time.perf_counter();n_=0;cl=[]
    while time.perf_counter()-t0<12:
        for _ in range(50):f()
        n_+=50
        if time.perf_counter()-t0>6:
            torch.cuda.synchronize();cl.append(smi())
    torch.cuda.synchronize();el=time.perf_counter()-t0
    # sustained: the last 6 s only
    torch.cuda.synchronize();t=time.perf_counter();c=0
    while time.perf_counter()-t<6:
        for _ in range(50):f()
        c+=50
    torch.cuda.synchronize();sus=fl*c/(time.perf_counter()-t)/1e12;cl.append(smi())
    mhz=sum(x[0] for x in cl)/len(cl);pw=sum(x[1] for x in cl)/len(cl)
    o.write(f'{d},{m},{n},{k},{burst:.1f},{sus:.1f},18,{mhz:.0f},{pw:.0f}\n');o.flush();print(d,m,n,k,burst,sus,mhz,pw,flush=True)

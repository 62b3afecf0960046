SKIP_PY=1 RUNS=6 bash bench/gpu/fresh_inputs_gpu.sh
bash bench/gpu/nodevice_gpu.sh 2>&1 | grep -v skipped | head -30

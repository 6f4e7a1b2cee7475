// SPDX-License-Identifier: MIT
//
// The CUDA stream tutorial's pitfall, on libaccel: the host buffer is
// deleted right after the cudaMemcpyAsync that reads it is queued
// ("delete[] memory_host;" straight after the copy, which the tutorial
// warns may crash or corrupt the copy under CUDA). libaccel stages a
// pageable source before the call returns, so the copy stays right.
// The tutorial's program otherwise, typos fixed as in
// cuda_stream_tutorial.cpp, with <libaccel/cuda_compat.h> for <cuda_runtime.h>.
// Expected output: 520.500000

#include <libaccel/cuda_compat.h>

#include <stdio.h>
#include <string.h>

#define checkRuntime(op)  __check_cuda_runtime((op),#op,__FILE__,__LINE__)

bool __check_cuda_runtime(cudaError_t code,const char* op,const char* file,int line)
{
	if(code != cudaSuccess){
		const char* err_name = cudaGetErrorName(code);
		const char* err_message = cudaGetErrorString(code);
		printf("runtime_error %s:%d %s failed.\n code=%s,message = %s\n",file,line,op,err_name,err_message);
		return false;
	}
	return true;
}

int main(){
	int device_id=0;
	checkRuntime(cudaSetDevice(device_id));

	cudaStream_t stream = nullptr;
	checkRuntime(cudaStreamCreate(&stream));

	float* memory_device=nullptr;
	checkRuntime(cudaMalloc(&memory_device,100*sizeof(float)));

	float* memory_host=new float[100];
	memory_host[2]=520.5;
	checkRuntime(cudaMemcpyAsync(memory_device,memory_host,sizeof(float)*100,cudaMemcpyHostToDevice,stream));  // 异步
	delete[] memory_host;

	float* memory_page_locked = nullptr;
	checkRuntime(cudaMallocHost(&memory_page_locked,100*sizeof(float)));
	checkRuntime(cudaMemcpyAsync(memory_page_locked,memory_device,sizeof(float)*100,cudaMemcpyDeviceToHost,stream));  // 异步
	checkRuntime(cudaStreamSynchronize(stream));

	printf("%f\n",memory_page_locked[2]);

	checkRuntime(cudaFreeHost(memory_page_locked));
	checkRuntime(cudaFree(memory_device));
	checkRuntime(cudaStreamDestroy(stream));
	return 0;
}

// SPDX-License-Identifier: MIT
//
// AscendCL stream management, "one thread, several streams" (单线程多Stream),
// from the AscendCL application development guide, ported to libaccel.
// The sample's lines are kept as published, with its typos fixed (the
// full-width semicolons, input1 passed for stream2's input2); the only
// other change to them is the include line, "acl/acl.h" ->
// <libaccel/acl_compat.h>, and the datasets they declare get values. The
// guide elides the surrounding program ("// ......"): those parts are
// filled in here, marked "filled in". Models are outside libaccel, so
// the "model" here is a stand-in that runs on the stream: it copies its
// input to its output through device memory.
#include <libaccel/acl_compat.h>

#include <stdio.h>
#include <string.h>

// filled in: the stand-in for AscendCL's model execution.
struct aclmdlDataset {
	unsigned char *data;	// pageable host memory
	size_t size;
};

static aclmdlDataset *dataset(size_t size, unsigned char seed)
{
	aclmdlDataset *d = new aclmdlDataset;

	d->data = new unsigned char[size];
	d->size = size;
	for (size_t i = 0; i < size; i++)
		d->data[i] = (unsigned char)(seed + i * 3);
	return d;
}

// Model N copies its input to its output, on the stream.
static aclError aclmdlExecuteAsync(uint32_t modelId, aclmdlDataset *input,
				   aclmdlDataset *output, aclrtStream stream)
{
	void *dev;
	aclError e;

	(void)modelId;
	if (input->size != output->size)
		return ACL_ERROR_INVALID_PARAM;
	e = aclrtMalloc(&dev, input->size, ACL_MEM_MALLOC_HUGE_FIRST);
	if (e != ACL_SUCCESS)
		return e;
	e = aclrtMemcpyAsync(dev, input->size, input->data, input->size,
			     ACL_MEMCPY_HOST_TO_DEVICE, stream);
	if (e == ACL_SUCCESS)
		e = aclrtMemcpyAsync(output->data, output->size, dev,
				     input->size, ACL_MEMCPY_DEVICE_TO_HOST,
				     stream);
	// Stream-ordered: the memory goes once the copies retired.
	aclrtFree(dev);
	return e;
}

int main()
{
	// filled in: initialization
	if (aclInit(nullptr) != ACL_SUCCESS) {
		printf("aclInit failed\n");
		return 1;
	}

// ......
int32_t deviceId = 0 ;
uint32_t modelId1 = 0;
uint32_t modelId2 = 1;
aclrtContext context;
aclrtStream stream1;
aclrtStream stream2;

// 如果只创建了一个Context，线程默认将这个Context作为线程当前的Context；
// 如果是多个Context，则需要调用aclrtSetCurrentContext接口设置当前线程的Context
 aclrtCreateContext(&context, deviceId);

 aclrtCreateStream(&stream1);
// 调用触发任务的接口，例如异步模型推理，任务下发在stream1
aclmdlDataset *input1 = dataset(1 << 20, 1);
aclmdlDataset *output1 = dataset(1 << 20, 0);
aclmdlExecuteAsync(modelId1, input1, output1, stream1);

aclrtCreateStream(&stream2);
// 调用触发任务的接口，例如异步模型推理， 任务下发在stream2
aclmdlDataset *input2 = dataset(1 << 20, 2);
aclmdlDataset *output2 = dataset(1 << 20, 0);
aclmdlExecuteAsync(modelId2, input2, output2, stream2);

// 流同步
aclrtSynchronizeStream(stream1);
aclrtSynchronizeStream(stream2);

// 释放资源
aclrtDestroyStream(stream1);
aclrtDestroyStream(stream2);
aclrtDestroyContext(context);
// ....

	// filled in: each model's output is its input
	int bad = memcmp(output1->data, input1->data, input1->size) != 0 ||
		  memcmp(output2->data, input2->data, input2->size) != 0;
	aclmdlDataset *all[] = { input1, output1, input2, output2 };
	for (aclmdlDataset *d : all) {
		delete[] d->data;
		delete d;
	}
	aclFinalize();
	printf("%s\n", bad ? "output mismatch" : "ok");
	return bad;
}

// SPDX-License-Identifier: MIT
//
// AscendCL stream management, "one thread, one stream" (单线程单Stream),
// from the AscendCL application development guide, ported to libaccel.
// The sample's lines are kept as published; the only change to them is
// the include line, "acl/acl.h" -> <libaccel/acl_compat.h>. The guide elides
// the surrounding program ("// ......"): those parts are filled in here
// (initialization, the buffers, checking the copy), marked "filled in".
#include <libaccel/acl_compat.h>

#include <stdio.h>
#include <string.h>

int main()
{
	// filled in: device, buffers
	size_t dstSize = 1 << 20, srcSize = 1 << 20;
	void *dstPtr = nullptr, *srcPtr = nullptr;
	unsigned char *back = new unsigned char[srcSize];

	if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
	    aclrtMalloc(&dstPtr, dstSize, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
	    aclrtMallocHost(&srcPtr, srcSize) != ACL_SUCCESS) {
		printf("setup failed\n");
		return 1;
	}
	for (size_t i = 0; i < srcSize; i++)
		((unsigned char *)srcPtr)[i] = (unsigned char)(i * 7);

// ......
// 显式创建一个Stream
aclrtStream stream;
aclrtCreateStream(&stream);

// 调用触发任务的接口，传入stream参数
aclrtMemcpyAsync(dstPtr, dstSize, srcPtr, srcSize, ACL_MEMCPY_HOST_TO_DEVICE, stream);
// 调用aclrtSynchronizeStream接口，阻塞应用程序运行，直到指定Stream中的所有任务都完成。
aclrtSynchronizeStream(stream);

// Stream使用结束后，显式销毁Stream
aclrtDestroyStream(stream);
// ......

	// filled in: the data reached the device
	int bad = aclrtMemcpy(back, srcSize, dstPtr, dstSize,
			      ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS ||
		  memcmp(back, srcPtr, srcSize) != 0;
	aclrtFree(dstPtr);
	aclrtFreeHost(srcPtr);
	aclrtResetDevice(0);
	aclFinalize();
	delete[] back;
	printf("%s\n", bad ? "copy mismatch" : "ok");
	return bad;
}

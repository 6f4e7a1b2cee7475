#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fails on purpose: the VM verdict of a run including it must be FAIL.
echo "TAP version 13"
echo "1..1"
echo "not ok 1 planted_fail # deliberately failing"
exit 1

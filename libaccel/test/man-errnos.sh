#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Every errno the tests provoke from a call is on that call's man page:
# gathers (call, errno) from the tests, CHECK_RET(accel_x(...), -EFOO) and
# accel_x(...) == / != -EFOO, and looks for \-EFOO in the RETURN VALUE
# section of man/accel_x.3 (following .so links). TAP, one line per pair.
set -eu
cd "$(dirname "$0")/.."
exec perl -e '
use strict;
my %pairs;
for my $f (glob("test/*.c")) {
	open(my $fh, "<", $f) or die "$f: $!";
	local $/;
	my $src = <$fh>;
	my $call = qr/(accel_\w+)\s*(\((?:[^()]++|(?-1))*\))/;
	while ($src =~ /CHECK_RET\(\s*$call\s*,\s*-(E[A-Z]+)\s*\)/g) {
		$pairs{"$1 $3"} //= $f;
	}
	while ($src =~ /$call\s*[!=]=\s*-(E[A-Z]+)\b/g) {
		$pairs{"$1 $3"} //= $f;
	}
}
sub section {
	my ($page) = @_;
	my $path = "man/$page.3";
	open(my $fh, "<", $path) or return undef;
	local $/;
	my $text = <$fh>;
	if ($text =~ /^\.so\s+(?:man3\/)?(\S+)\.3\s*$/m) {
		return section($1);
	}
	$text =~ /^\.SH RETURN VALUE\n(.*?)(?=^\.SH |\z)/ms or return "";
	return $1;
}
my @keys = sort keys %pairs;
my ($n, $fail) = (0, 0);
print "TAP version 13\n1..", scalar(@keys), "\n";
for my $k (@keys) {
	my ($call, $err) = split / /, $k;
	my $sec = section($call);
	$n++;
	if (!defined $sec) {
		print "not ok $n $call $err # no page man/$call.3 ($pairs{$k})\n";
		$fail++;
	} elsif ($sec !~ /\\-\Q$err\E\b/) {
		print "not ok $n $call $err # not in the RETURN VALUE of man/$call.3 (provoked in $pairs{$k})\n";
		$fail++;
	} else {
		print "ok $n $call $err\n";
	}
}
printf "# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", $n - $fail, $fail;
exit($fail ? 1 : 0);
'

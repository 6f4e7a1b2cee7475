#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Every errno the tests provoke from a call is on that call's man page:
# gathers (call, errno) from the tests, CHECK_RET(accel_x(...), -EFOO) and
# accel_x(...) == / != -EFOO, and looks for \-EFOO in the RETURN VALUE
# section of man/accel_x.3 (following .so links). TAP, one line per pair.
# Then, per man page, the errnos of its RETURN VALUE equal those the
# kernel-doc of include/libaccel.h gives the calls documented on it (a
# "Return: as accel_y()" follows accel_y): one line per page.
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
sub page_of {
	my ($name) = @_;
	open(my $fh, "<", "man/$name.3") or return undef;
	local $/;
	my $text = <$fh>;
	return page_of($1) if $text =~ /^\.so\s+(?:man3\/)?(\S+)\.3\s*$/m;
	return $name;
}
my %hdr;	# call => { errno => 1 }
my %as;		# call => the call its Return: defers to
{
	# libaccel.h and the topic headers it includes.
	my $h = "";
	for my $f ("include/libaccel.h", glob("include/libaccel/*.h")) {
		open(my $fh, "<", $f) or die "$f: $!";
		local $/;
		$h .= <$fh>;
		close($fh);
	}
	while ($h =~ m{/\*\*\n \* (accel_\w+)\(\)(.*?)\*/}gs) {
		my ($call, $body) = ($1, $2);
		next unless $body =~ /Return:(.*)/s;
		my $ret = $1;
		if ($ret =~ /^\s*as (accel_\w+)\(\)/) {
			$as{$call} = $1;
			next;
		}
		$hdr{$call} = { map { $_ => 1 } $ret =~ /-(E[A-Z]+)\b/g };
	}
}
my %page_hdr;	# page => { errno => 1 }, over the calls it documents
for my $call (keys %hdr) {
	my $page = page_of($call);
	next unless defined $page;
	$page_hdr{$page}{$_} = 1 for keys %{$hdr{$call}};
}
my @keys = sort keys %pairs;
my @pages = sort keys %page_hdr;
my ($n, $fail) = (0, 0);
print "TAP version 13\n1..", scalar(@keys) + scalar(@pages), "\n";
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
for my $page (@pages) {
	my %man = map { $_ => 1 } (section($page) // "") =~ /\\-(E[A-Z]+)\b/g;
	my @hdr_only = grep { !$man{$_} } sort keys %{$page_hdr{$page}};
	my @man_only = grep { !$page_hdr{$page}{$_} } sort keys %man;
	$n++;
	if (@hdr_only || @man_only) {
		print "not ok $n header agrees with man/$page.3 # only in libaccel.h: @hdr_only; only on the page: @man_only\n";
		$fail++;
	} else {
		print "ok $n header agrees with man/$page.3\n";
	}
}
printf "# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", $n - $fail, $fail;
exit($fail ? 1 : 0);
'
